// Package kafkapeer measures the Kafka peer of brokerlab's benchmark suite:
// kfake, franz-go's in-process fake Kafka cluster, driven by the franz-go
// client, doing a brokerlab seed's work. It is a module of its own because
// the only kfake the module proxy serves needs a newer go line than the
// repository's workspace declares; bench/run.sh runs it with GOWORK=off and
// its output joins the suite's table, paired round by round with the
// brokerlab seed measured moments before.
package kafkapeer
