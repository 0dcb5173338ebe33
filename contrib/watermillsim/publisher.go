package watermillsim

import (
	"fmt"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/sim"
)

// Publisher is a Watermill message.Publisher on a Broker. It is safe for
// concurrent use.
type Publisher struct {
	b      *Broker
	closed atomic.Bool
}

var _ message.Publisher = (*Publisher)(nil)

// Publisher returns a new Publisher on b. Publishers share the broker;
// closing one does not affect the others.
func (b *Broker) Publisher() *Publisher { return &Publisher{b: b} }

// Publish hands msgs to the topic in order, in one step of the owner
// goroutine, creating the topic on first use. It returns when the broker
// accepted them: the model traces each one it accepts (sent, published,
// produced), and the ledger learns of it from that event. A message's UUID
// maps to one stable sim ID, so publishing the same message again is a
// re-publish of the same message in the ledger. While the
// broker.unavailable fault fires Publish fails with the model's error
// (wrapping sim.ErrUnavailable), and the messages from the failing one on
// were not accepted: the ledger does not know them until a retry
// succeeds.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	if p.closed.Load() {
		return ErrClosed
	}
	b := p.b
	var err error
	derr := b.doKey(publishKey(msgs), func(w *sim.World) {
		t, terr := b.topic(topic)
		if terr != nil {
			err = terr
			return
		}
		defer t.wake.fire()
		for _, wm := range msgs {
			m := b.toSim(topic, wm)
			var perr error
			switch b.cfg.Kind {
			case KindQueue:
				perr = t.q.Send(m, 0)
			case KindPubSub:
				perr = b.ps.PublishTo(topic, m)
			case KindLog:
				_, perr = t.lt.Produce(m)
			}
			if perr != nil {
				err = fmt.Errorf("watermillsim: publish %s to %q: %w", wm.UUID, topic, perr)
				return
			}
		}
	})
	if derr != nil {
		return derr
	}
	return err
}

// Close marks the publisher closed; later Publish calls fail with
// ErrClosed. Messages already published stay in the broker.
func (p *Publisher) Close() error {
	p.closed.Store(true)
	return nil
}

// publishKey names a Publish call for lockstep: the subscription whose
// handler publishes (a message whose context derives from a delivery),
// else the Router handler that produced the messages, else "publish".
// A UUID is never part of it: watermill.NewUUID draws from crypto/rand.
func publishKey(msgs []*message.Message) string {
	if len(msgs) == 0 {
		return "publish"
	}
	ctx := msgs[0].Context()
	if d, ok := ctx.Value(deliveryKey{}).(*delivery); ok {
		return d.key + "/publish"
	}
	if h := message.HandlerNameFromCtx(ctx); h != "" {
		return "handler:" + h + "/publish"
	}
	return "publish"
}
