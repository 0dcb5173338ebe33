package exercise

// The model solution of exercise 2.
func dlqModel() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			if err := handle(m.Body); err != nil {
				if m.Attempts >= max {
					*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
					q.Ack(m.ID)
				}
				continue
			}
			q.Ack(m.ID)
		}
	}}
}

// Wrong: every failure is dead-lettered at once.
func dlqFirstFailure() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			if err := handle(m.Body); err != nil {
				*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
			}
			q.Ack(m.ID)
		}
	}}
}

// Wrong: a failure is retried forever (no dead-letter list at all).
func dlqRetryForever() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			if handle(m.Body) == nil {
				q.Ack(m.ID)
			}
		}
	}}
}

// Wrong: a failure is acked (swallowed) and forgotten.
func dlqSwallow() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			_ = handle(m.Body)
			q.Ack(m.ID)
		}
	}}
}

// What the workspace's stub does.
func dlqStubbed() Solution {
	return DeadLetterLoop{ProcessAll: func(WorkQueue, func(string) error, int, *[]DeadLetter) {}}
}
