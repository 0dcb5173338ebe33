module github.com/brokerlab/brokerlab

go 1.26

require (
	github.com/gdamore/tcell/v2 v2.13.10
	github.com/goccy/go-yaml v1.19.2
	github.com/hashicorp/go-memdb v1.3.5
	github.com/rivo/tview v0.42.0
	github.com/rivo/uniseg v0.4.7
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/term v0.45.0
)

require (
	github.com/gdamore/encoding v1.0.1 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	github.com/lucasb-eyer/go-colorful v1.3.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
