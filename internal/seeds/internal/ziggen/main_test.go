package main

import (
	"fmt"
	"strings"
	"testing"
)

// header builds a header in numpy's layout with n entries per table.
func header(n int) string {
	var b strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&b, "static const %s %s[] = {\n", t.goType, t.cName)
		for i := 0; i < n; i++ {
			switch t.goType {
			case "uint64":
				fmt.Fprintf(&b, "0x000EF33D8025EF%02XULL, ", i)
			case "uint32":
				fmt.Fprintf(&b, "0x0077%04XUL, ", i)
			case "float32":
				fmt.Fprintf(&b, "4.66198677960027669255e-07f, ")
			default:
				fmt.Fprintf(&b, "8.68362706080130616677e-16, ")
			}
		}
		b.WriteString("};\n\n")
	}
	b.WriteString("static const double ziggurat_nor_r = 3.6541528853610087963519472518;\n")
	b.WriteString("static const double ziggurat_nor_inv_r =\n" +
		"    0.27366123732975827203338247596; // 1.0 / ziggurat_nor_r;\n")
	b.WriteString("static const float ziggurat_nor_r_f = 3.6541528853610087963519472518f;\n")
	b.WriteString("static const float ziggurat_nor_inv_r_f = 0.27366123732975827203338247596f;\n")
	return b.String()
}

func TestGenerateKeepsLiteralsVerbatim(t *testing.T) {
	code, err := generate(header(tableLen))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"var kiDouble = [256]uint64{",
		"0x000EF33D8025EFFF,",
		"var wiFloat = [256]float32{",
		"4.66198677960027669255e-07,",
		"zigNorInvR  float64 = 0.27366123732975827203338247596",
		"zigNorRF    float32 = 3.6541528853610087963519472518",
	} {
		if !strings.Contains(string(code), want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}

func TestGenerateRejectsWrongLength(t *testing.T) {
	_, err := generate(header(255))
	if err == nil || !strings.Contains(err.Error(), "has 255 entries, want 256") {
		t.Fatalf("error %v, want a length complaint", err)
	}
}

func TestGoLiteralRejectsUnknown(t *testing.T) {
	if _, err := goLiteral("1.0L"); err == nil {
		t.Fatal("long double literal accepted")
	}
}
