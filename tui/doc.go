// Package tui is the terminal player of brokerlab: a lesson menu and a
// player screen that shows a running scenario panel by panel (queues, pub/sub
// topics, partitioned logs, outboxes), the lesson's subject (a service's
// business rows against its published events, a consumer group's
// projection before and after a replay, the effects per key of the
// consumers a lesson compares), a metrics strip with sparklines, a
// colour-coded trace, the lesson narration and a hints bar.
//
// The package is rendering and input only; it never touches a simulation.
// A runner implements Driver and describes each tick as an immutable
// lab.Snapshot: a lab.Session plays a scenario (stepping, time travel with
// its action log, hand actions, verdicts, the view-models of every panel),
// a lab.Pair plays two in lockstep, a lab.Playback replays a recorded
// run. The views only read snapshots. The architecture keeps three rules:
//
//   - One goroutine owns the Driver (see Loop and Controller). It receives
//     Commands on a channel, steps the simulation on a wall-clock ticker
//     while playing, and posts a new Snapshot to the UI goroutine with
//     tview.Application.QueueUpdateDraw, which waits until the frame is
//     taken; the commands that queued up meanwhile are applied together and
//     posted as one frame, so at most one frame is pending and a slow
//     terminal slows the ticks down instead of queueing frames.
//   - Views only read the Snapshot they were given; key handlers only send
//     Commands (view-local state such as focus, scrolling, the trace filter
//     and the help overlay stays in the views).
//   - Quitting stops the driver goroutine, and waits for it (on another
//     goroutine than the UI's, which the driver may be waiting for), before
//     the application stops. The UI goroutine never blocks on the driver.
//
// Every key lives in one table (Bindings); the hints bar and the help
// overlay are generated from it. Colours are tcell styles, always paired with
// a symbol (✖ loss, ⚠ fault, ↻ duplicate or redelivery, ☠ dead letter), and
// NO_COLOR switches to plain styles. Layouts adapt to the terminal: at 80x24
// the model panels become tabs, at larger sizes they sit side by side.
//
// A frame is drawn in time proportional to the screen size plus the capped
// parts of the snapshot (MaxChips chips per queue area, MaxTrace trace
// events, MaxHistory samples per series), never to the number of messages in
// the simulation.
package tui
