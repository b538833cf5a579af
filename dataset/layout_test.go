package dataset

import "testing"

// Publishing sends a dataset's own files only: everything else a dataset
// directory may hold (a token, hidden files, staging folders, notes) is
// left out.
func TestIsDatasetFileIsTheLayoutOnly(t *testing.T) {
	for _, p := range append([]string{
		"metadata.json", "README.md",
		"data/public-00000-of-00001.parquet", "data/my-split-00003-of-00010.parquet",
		"prepared/public/data-00000-of-00001.arrow",
		"prepared/holdout/dataset_info.json", "prepared/holdout/state.json",
	}, ReportPaths()...) {
		if !IsDatasetFile(p) {
			t.Errorf("%s is a dataset's file, but was refused", p)
		}
	}
	for _, p := range []string{
		".hf_token", "hf_token", ".DS_Store", "notes.txt", "manifest.json", "metadata.json.tmp",
		"data/.public-00000-of-00001.parquet.part-1", "data/notes.txt",
		"data/Public-00000-of-00001.parquet",
		"data/public-0-of-1.parquet", "data/sub/public-00000-of-00001.parquet",
		".report.tmp-123/index.html", "report/draft.png", "report/sub/index.html",
		"prepared/public/cache.bin", "prepared/public/.state.json", "prepared/Bad/state.json",
		"prepared/state.json",
		"./metadata.json", "../metadata.json", "/metadata.json",
		"data//public-00000-of-00001.parquet",
	} {
		if IsDatasetFile(p) {
			t.Errorf("%s is not a dataset's file, but was accepted", p)
		}
	}
}
