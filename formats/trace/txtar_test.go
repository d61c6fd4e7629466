package trace_test

import (
	"bytes"
	"strings"
)

// A minimal txtar (golang.org/x/tools/txtar) reader and writer, so the
// module does not need x/tools for its tests.

type txtarFile struct {
	Name string
	Data []byte
}

type txtarArchive struct {
	Comment []byte
	Files   []txtarFile
}

func parseTxtar(data []byte) *txtarArchive {
	a := new(txtarArchive)
	var cur *txtarFile
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		s := strings.TrimRight(string(line), "\n")
		if strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") && len(s) > 6 {
			a.Files = append(a.Files, txtarFile{Name: s[3 : len(s)-3]})
			cur = &a.Files[len(a.Files)-1]
			continue
		}
		if cur == nil {
			a.Comment = append(a.Comment, line...)
		} else {
			cur.Data = append(cur.Data, line...)
		}
	}
	return a
}

func (a *txtarArchive) file(name string) []byte {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func formatTxtar(a *txtarArchive) []byte {
	var b bytes.Buffer
	b.Write(a.Comment)
	for _, f := range a.Files {
		b.WriteString("-- " + f.Name + " --\n")
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func strconvItoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
