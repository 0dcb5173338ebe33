module github.com/brokerlab/brokerlab

go 1.26

require (
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-memdb v1.3.5 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
)
