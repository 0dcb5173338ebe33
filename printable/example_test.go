package printable_test

import (
	"fmt"
	"os"

	"github.com/brokerlab/brokerlab/printable"
)

// A file name with an escape sequence in it is printed with the sequence
// spelled out, so it cannot clear the screen.
func ExampleString() {
	fmt.Println("wrote", printable.String("report\x1b[2J.json"))
	// Output:
	// wrote report\x1b[2J.json
}

// A Writer keeps line breaks and escapes the rest.
func ExampleWriter() {
	w := printable.NewWriter(os.Stdout)
	fmt.Fprintf(w, "key %s\nbell %s\n", "k\x1b[31m", "\a")
	w.Flush()
	// Output:
	// key k\x1b[31m
	// bell \a
}
