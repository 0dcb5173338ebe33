package sim

import "strconv"

// Tick is a point in logical time. Tick 0 is the start of a run; durations
// (visibility timeouts, retention, backoff) are counted in ticks too.
type Tick int64

// String formats the tick as "t=N".
func (t Tick) String() string { return "t=" + strconv.FormatInt(int64(t), 10) }

// Clock is the logical clock of a run. The zero value is a clock at tick 0.
// Only the World (or a test driving a model by hand) advances it.
type Clock struct {
	now Tick
}

// Now returns the current tick.
func (c *Clock) Now() Tick { return c.now }

// Advance moves the clock forward by one tick and returns the new tick.
func (c *Clock) Advance() Tick {
	c.now++
	return c.now
}

// Set moves the clock to t. It is meant for tests that drive a model by hand;
// moving the clock backwards is allowed only there and never by the World.
func (c *Clock) Set(t Tick) { c.now = t }
