package kernels

import "testing"

func FuzzParseGDNTable(f *testing.F) {
	f.Add([]byte("# gpu: x\nkernel,mode,state_dtype,batch,q_len,heads,kv_heads,head_dim,graph_us,eager_us,eager_sync_us\nsglang_chunk,prefill,fp32,1,64,8,2,128,26.1,920.3,858.6\n"))
	f.Add([]byte("mode,batch,q_len,heads,kv_heads,head_dim,graph_us\ndecode,4,1,8,2,128,3\nverify,4,2,8,2,128,5\n"))
	f.Add([]byte("mode,batch\n\"unterminated\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseGDNTable("fuzz.csv", data)
		if err != nil {
			return
		}
		ix := buildGDNIndex(rows)
		for k, fam := range ix.graph {
			if v, _ := fam.at(2, 100); !(v > 0) {
				t.Fatalf("%v: non-positive interpolation %g", k, v)
			}
		}
	})
}

func FuzzParseMoEKernelTable(f *testing.F) {
	f.Add([]byte("kernel,dtype,tokens,experts,topk,hidden,inter,config,kernels_us\nk,bf16,1,512,10,4096,128,default:{BLOCK_SIZE_M=16},30.7\nk,bf16,8,512,10,4096,128,x,50\n"))
	f.Add([]byte("tokens,experts,topk,hidden,inter,kernels_us\n1,2,3,4,5,6\n"))
	f.Add([]byte("# kernels_us: busiest rank\nkernel,dtype,tokens,experts,topk,hidden,inter,ep,config,kernels_us\nk,fp8,1,64,10,4096,1024,8,c,37.7\nk,fp8,2,64,10,4096,1024,,c,47\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseMoEKernelTable("fuzz.csv", data)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.EP < 1 || r.EP > maxMoEEP || r.TopK > r.Experts*r.EP {
				t.Fatalf("row %+v: ep or topk out of bounds", r)
			}
		}
		m, _ := buildMoEIndex(rows)
		for k, c := range m {
			if v, _ := c.at(3); !(v > 0) {
				t.Fatalf("%v: non-positive interpolation %g", k, v)
			}
		}
	})
}
