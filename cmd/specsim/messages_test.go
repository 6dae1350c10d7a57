package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The messages review 2 #14 listed: each says what is wrong in the user's
// terms, on one line.
func TestReview2Messages(t *testing.T) {
	dir := t.TempDir()
	measured := filepath.Join("..", "..", "audit", "measured", "testdata", "measured.csv")
	header := writeTemp(t, "hdr.csv", "op,dtype,m,n,k,latency_us\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--gpu", "b200", "-o", filepath.Join(dir, "c.yaml"), measured}, "--gpu b200: no measured point is a b200 point (the files hold: h200)"},
		{[]string{"calibrate", "--gpu", "bogus", "-o", filepath.Join(dir, "c.yaml"), measured}, "--gpu bogus: no measured point is a bogus point"},
		{[]string{"kernels", "validate", "--gpu", "h200", "--table", header}, header + ": no measured rows (a header alone?)"},
		{[]string{"audit", indexOnlyQwen(t), "--deep"}, "--deep reads weight values, but "},
	} {
		code, out, errs := runCLI(c.args...)
		if code != exitBadInput || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q\n%s", c.args, code, errs, c.want, out)
		}
	}
	// golden: an unknown subcommand is one line, and show's csv is listed.
	code, out, errs := runCLI("golden", "check")
	if code != exitBadInput || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `unknown subcommand "check" (want list, lookup, show; specsim golden --help for their flags)`) {
		t.Errorf("golden check: exit %d %q", code, errs)
	}
	if _, out, _ = runCLI("golden", "--help"); !strings.Contains(out, "--format markdown|csv") {
		t.Errorf("golden --help:\n%s", out)
	}
	// A recipe on standard input, one variant of it: "-:SEL" is an
	// argument, before or after the flags; review --recipe - reads it too.
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recipes", "schema2_qwen3.5_sglang_gb300-fp4_agentx_agg-variants.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := string(data)
	for _, args := range [][]string{{"recipe", "check", "-:override_c24", "--format", "csv"}, {"recipe", "check", "--format", "csv", "-:override_c24"}} {
		withStdin(t, recipe, func() { code, out, errs = runCLI(args...) })
		if code != exitOK || !strings.Contains(out, "\noverride_c24,agg,sglang,NEXTN,3,") || strings.Contains(out, "override_c1,") {
			t.Errorf("%v: exit %d %s%s", args, code, out, errs)
		}
	}
	withStdin(t, recipe, func() {
		code, out, errs = runCLI("review", "--recipe", "-:override_c1", "--checkpoint", indexOnlyQwen(t), "--format", "markdown")
	})
	if code != exitOK || !strings.Contains(out, "### Golden AL") {
		t.Errorf("review --recipe -:override_c1: exit %d %s%s", code, out, errs)
	}
	// compare lists skipped rows in file order: reader skips (row 4) and
	// model skips (rows 2, 3, 5) interleaved by row.
	sk := writeTemp(t, "sk.csv", "gpu,topology,conc,isl,osl,precision,model,steps,measured_tpot_ms\n"+
		"h200,agg:tp8,4,1024,1024,fp4,DeepSeek-R1,3,20\nh200,agg:tp8,4,1024,1024,fp8,DeepSeek-R1,3,20\n,,,,,,,,\nh200,agg:tp8,4,1024,1024,fp4,DeepSeek-R1,3,20\n")
	_, _, errs = runCLI("compare", sk)
	var rows []string
	for _, l := range strings.Split(errs, "\n") {
		if strings.HasPrefix(l, "skipped "+sk+":") {
			rows = append(rows, strings.SplitN(strings.TrimPrefix(l, "skipped "+sk+":"), ":", 2)[0])
		}
	}
	if strings.Join(rows, ",") != "2,3,4,5" {
		t.Errorf("skipped rows in order %v:\n%s", rows, errs)
	}
}
