package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// TestForwardResend checks a queue consumer's forward through the whole
// stack: a crash after the effect loses the outgoing message, the
// idempotent redelivery publishes nothing, unless resend is on; and a
// forward to a service is refused at the field.
func TestForwardResend(t *testing.T) {
	src := `title: forward
run: {ticks: 12}
topology:
  queues: [{name: in, visibility_timeout: 2}, {name: out}]
actors:
  producers: [{name: p, to: {queue: in}, count: 2, keys: [a, b]}]
  consumers:
    - {name: c, queue: in, idempotency: message_id, forward: {to: {queue: out}, type: next}}
    - {name: d, queue: out}
faults:
  - {name: crash, point: consumer.crash_after_effect, match: {key: a, consumer: c}, nth: 1}
`
	sent := func(src string) (n int, types []string) {
		t.Helper()
		s, err := scenario.Load("f.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		rec := &sim.Recorder{}
		if _, err := Execute(s, Options{Sinks: []sim.Sink{rec}}); err != nil {
			t.Fatal(err)
		}
		for _, e := range rec.Events() {
			if e.Kind == sim.KindSent && e.Where == "queue:out" {
				n++
				types = append(types, e.Key+"/"+e.Type+"/"+e.Corr)
			}
		}
		return n, types
	}
	if n, ts := sent(src); n != 1 || ts[0] != "b/next/m2" {
		t.Errorf("without resend: %d outgoing messages %v, want only b's", n, ts)
	}
	if n, ts := sent(strings.Replace(src, "type: next}", "type: next, resend: true}", 1)); n != 2 {
		t.Errorf("with resend: %d outgoing messages %v, want a's re-sent too", n, ts)
	}
	_, err := scenario.Load("f.yaml", []byte(strings.Replace(src, "to: {queue: out}", "to: {service: out}", 1)))
	if err == nil || !strings.Contains(err.Error(), "forwards to a service; a forward goes to a queue, topic or log") {
		t.Errorf("forward to a service: %v", err)
	}
}
