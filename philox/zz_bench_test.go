//go:build amd64 && !purego

package philox

import "testing"

func BenchmarkParts(b *testing.B) {
	for _, k := range kernels {
		var st laneState
		st.init([2]uint32{1, 2}, 0, 64, k.lanes)
		var words [batchGroups * 16 * 4]uint32
		out := make([]float32, batchGroups*16*4)
		b.Run(k.name+"/philox", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				k.philox(&words[0], 256/k.lanes, &st)
			}
		})
		b.Run(k.name+"/normals", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				k.normals(&out[0], &words[0], 256/k.lanes)
			}
		})
	}
}
