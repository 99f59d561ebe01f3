package tagq_test

import (
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every code block of the package's documentation (its doc comments, as
// go doc shows them) and of the Go client's sections of the READMEs is in
// an Example function of the tests, verbatim: the compiler checks it
// against the API, so a snippet cannot call what no longer exists (as
// doc.go once called Send with a signature it had lost). Indentation,
// blank lines, runs of spaces (gofmt's alignment of comments) and import
// lines are not compared.
func TestDocs_CodeIsCompiledAsExamples(t *testing.T) {
	examples := exampleBodies(t)
	require.NotEmpty(t, examples)
	var blocks []docBlock
	blocks = append(blocks, commentBlocks(t)...)
	blocks = append(blocks, readmeBlocks(t, filepath.Join("..", "..", "README.md"), "### Go")...)
	blocks = append(blocks, readmeBlocks(t, "README.md", "")...)
	require.GreaterOrEqual(t, len(blocks), 5, "the code blocks found: doc.go's, Dial's and the README's")
	for _, b := range blocks {
		found := false
		for _, body := range examples {
			if contains(body, b.lines) {
				found = true
				break
			}
		}
		require.True(t, found, "%s: this code is in no Example function of the tests; put it there verbatim, so that it compiles:\n%s",
			b.where, b.code)
	}
}

// docBlock is a code block of the documentation: its text, and its lines
// as codeLines has them.
type docBlock struct {
	where, code string
	lines       []string
}

// codeLines are the lines of code compared: blank lines and imports
// dropped, each line trimmed and its runs of blanks made one.
func codeLines(code string) []string {
	var out []string
	for _, l := range strings.Split(code, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" || strings.HasPrefix(l, "import ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// contains reports whether lines run, in order and together, in body.
func contains(body, lines []string) bool {
	for i := 0; i+len(lines) <= len(body); i++ {
		if slices.Equal(body[i:i+len(lines)], lines) {
			return true
		}
	}
	return false
}

// exampleBodies are the bodies of the Example functions of the package's
// tests.
func exampleBodies(t *testing.T) [][]string {
	t.Helper()
	var bodies [][]string
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	for _, name := range files {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			from, to := fset.Position(fn.Body.Lbrace).Offset+1, fset.Position(fn.Body.Rbrace).Offset
			bodies = append(bodies, codeLines(string(src[from:to])))
		}
	}
	return bodies
}

// commentBlocks are the code blocks of the package's doc comments.
func commentBlocks(t *testing.T) []docBlock {
	t.Helper()
	var blocks []docBlock
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		for _, cg := range f.Comments {
			var p comment.Parser
			for _, b := range p.Parse(cg.Text()).Content {
				if code, ok := b.(*comment.Code); ok {
					blocks = append(blocks, docBlock{fset.Position(cg.Pos()).String(), code.Text, codeLines(code.Text)})
				}
			}
		}
	}
	return blocks
}

// readmeBlocks are the ```go blocks of a Markdown file: of its section
// under heading (up to the next heading of that level or above), or of
// the whole file when heading is "". Blocks that use tagqtest are left
// out: it is the server module's, which this module cannot import (the
// server module requires this one), and its own tests show it.
func readmeBlocks(t *testing.T, path, heading string) []docBlock {
	t.Helper()
	md, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(md), "\n")
	if heading != "" {
		start := slices.Index(lines, heading)
		require.GreaterOrEqual(t, start, 0, "%s has a section %q", path, heading)
		level := strings.Index(heading, " ")
		end, fenced := len(lines), false
		for i := start + 1; i < len(lines) && end == len(lines); i++ {
			h := strings.Index(lines[i], " ")
			switch {
			case strings.HasPrefix(lines[i], "```"):
				fenced = !fenced
			case !fenced && h > 0 && h <= level && strings.Trim(lines[i][:h], "#") == "":
				end = i
			}
		}
		lines = lines[start:end]
	}
	where := path
	if heading != "" {
		where += " (" + heading + ")"
	}
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		from := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		code := strings.Join(lines[from:i], "\n")
		if strings.Contains(code, "tagqtest.") {
			continue
		}
		blocks = append(blocks, docBlock{where, code, codeLines(code)})
	}
	return blocks
}
