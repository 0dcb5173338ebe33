package exercise

import (
	"errors"
	"fmt"
)

// The model solution of exercise 1.
func outboxModel() Solution {
	return Outbox{
		PlaceOrder: func(db *Store, amount int) (int, error) {
			txn := db.Txn()
			defer txn.Abort()
			id := txn.InsertOrder(amount)
			txn.InsertOutbox(id, fmt.Sprintf("order %d placed, amount %d", id, amount))
			txn.Commit()
			return id, nil
		},
		Relay: func(db *Store, broker Broker) error {
			txn := db.Txn()
			rows := txn.Unsent()
			txn.Abort()
			for _, row := range rows {
				if err := broker.Publish(row.Payload); err != nil {
					return err
				}
				txn := db.Txn()
				txn.MarkSent(row.ID)
				txn.Commit()
			}
			return nil
		},
	}
}

// Wrong: the order and its row in two transactions (a dual write inside
// the database).
func outboxTwoTxns() Solution {
	s := outboxModel().(Outbox)
	s.PlaceOrder = func(db *Store, amount int) (int, error) {
		txn := db.Txn()
		id := txn.InsertOrder(amount)
		txn.Commit()
		txn = db.Txn()
		txn.InsertOutbox(id, fmt.Sprintf("order %d placed, amount %d", id, amount))
		txn.Commit()
		return id, nil
	}
	return s
}

// Wrong: the row is marked sent before it is published.
func outboxMarkFirst() Solution {
	s := outboxModel().(Outbox)
	s.Relay = func(db *Store, broker Broker) error {
		txn := db.Txn()
		rows := txn.Unsent()
		txn.Abort()
		for _, row := range rows {
			txn := db.Txn()
			txn.MarkSent(row.ID)
			txn.Commit()
			if err := broker.Publish(row.Payload); err != nil {
				return err
			}
		}
		return nil
	}
	return s
}

// Wrong: a failed publish is skipped and the relay goes on with the next
// row.
func outboxSkipFailed() Solution {
	s := outboxModel().(Outbox)
	s.Relay = func(db *Store, broker Broker) error {
		txn := db.Txn()
		rows := txn.Unsent()
		txn.Abort()
		var first error
		for _, row := range rows {
			if err := broker.Publish(row.Payload); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			txn := db.Txn()
			txn.MarkSent(row.ID)
			txn.Commit()
		}
		return first
	}
	return s
}

// What the workspace's stub does.
func outboxStubbed() Solution {
	return Outbox{
		PlaceOrder: func(*Store, int) (int, error) { return 0, errors.New("PlaceOrder is not written yet") },
		Relay:      func(*Store, Broker) error { return errors.New("Relay is not written yet") },
	}
}
