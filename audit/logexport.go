package audit

// CompareLog matches the weight-load lines of the engine log c.LogPath
// with the report's modeled draft sizes (the same matching Run does for
// Config.LogPath) and adds its LogMatch rows and findings; callers with
// several logs call it once per file.
func (r *Report) CompareLog(c Config) error {
	if err := r.compareLog(c); err != nil {
		return err
	}
	sortFindings(r.Findings)
	return nil
}
