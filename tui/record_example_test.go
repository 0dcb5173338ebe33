package tui_test

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/tui"
)

// ExampleRecord records a lesson as an asciinema v2 cast: a header line,
// then one event line per frame.
func ExampleRecord() {
	s, err := scenario.LoadLesson("dual-write")
	if err != nil {
		panic(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		panic(err)
	}
	var cast bytes.Buffer
	res, err := tui.Record(&cast, d, tui.RecordConfig{Width: 80, Height: 24, Title: "dual write", Bare: true})
	if err != nil {
		panic(err)
	}
	sc := bufio.NewScanner(&cast)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	fmt.Println(sc.Text())
	fmt.Println(res.Events, "events up to", res.Ticks)
	// Output:
	// {"version":2,"width":80,"height":24,"title":"dual write","env":{"TERM":"xterm-256color"}}
	// 22 events up to t=18
}
