package exercise

import "errors"

// The model solution of exercise 4.
func idemModel() Solution {
	return IdempotentConsumer{Handle: func(db *DB, p Payment) error {
		txn := db.Txn()
		defer txn.Abort()
		if txn.Processed(p.MsgID) {
			return nil
		}
		txn.Charge(p.Account, p.Amount, p.MsgID)
		txn.MarkProcessed(p.MsgID)
		txn.Commit()
		return nil
	}}
}

// Wrong: no deduplication at all.
func idemNaive() Solution {
	return IdempotentConsumer{Handle: func(db *DB, p Payment) error {
		txn := db.Txn()
		defer txn.Abort()
		txn.Charge(p.Account, p.Amount, p.MsgID)
		txn.Commit()
		return nil
	}}
}

// Wrong: the dedup row first, in a transaction of its own.
func idemMarkFirst() Solution {
	return IdempotentConsumer{Handle: func(db *DB, p Payment) error {
		txn := db.Txn()
		if txn.Processed(p.MsgID) {
			txn.Abort()
			return nil
		}
		txn.MarkProcessed(p.MsgID)
		txn.Commit()
		txn = db.Txn()
		txn.Charge(p.Account, p.Amount, p.MsgID)
		txn.Commit()
		return nil
	}}
}

// Wrong: the charge first, the dedup row in a second transaction.
func idemChargeFirst() Solution {
	return IdempotentConsumer{Handle: func(db *DB, p Payment) error {
		txn := db.Txn()
		if txn.Processed(p.MsgID) {
			txn.Abort()
			return nil
		}
		txn.Charge(p.Account, p.Amount, p.MsgID)
		txn.Commit()
		txn = db.Txn()
		txn.MarkProcessed(p.MsgID)
		txn.Commit()
		return nil
	}}
}

// What the workspace's stub does.
func idemStubbed() Solution {
	return IdempotentConsumer{Handle: func(*DB, Payment) error { return errors.New("Handle is not written yet") }}
}
