package exercise

// The model solution of exercise 5.
func memberModel() Solution {
	return GroupMember{Consume: func(m Member, db *DB) {
		recs := m.Poll()
		for _, rec := range recs {
			txn := db.Txn()
			if !txn.Processed(rec.MsgID) {
				txn.Charge(rec.Account, rec.Amount, rec.MsgID)
				txn.MarkProcessed(rec.MsgID)
				txn.Commit()
			}
			txn.Abort()
		}
		if len(recs) > 0 {
			_ = m.Commit(recs...)
		}
	}}
}

// Wrong: the offsets are committed before the records are processed.
func memberCommitFirst() Solution {
	return GroupMember{Consume: func(m Member, db *DB) {
		recs := m.Poll()
		if len(recs) > 0 {
			_ = m.Commit(recs...)
		}
		for _, rec := range recs {
			txn := db.Txn()
			if !txn.Processed(rec.MsgID) {
				txn.Charge(rec.Account, rec.Amount, rec.MsgID)
				txn.MarkProcessed(rec.MsgID)
				txn.Commit()
			}
			txn.Abort()
		}
	}}
}

// Wrong: commit after processing, but the effect is not idempotent.
func memberNoDedup() Solution {
	return GroupMember{Consume: func(m Member, db *DB) {
		recs := m.Poll()
		for _, rec := range recs {
			txn := db.Txn()
			txn.Charge(rec.Account, rec.Amount, rec.MsgID)
			txn.Commit()
		}
		if len(recs) > 0 {
			_ = m.Commit(recs...)
		}
	}}
}

// What the workspace's stub does.
func memberStubbed() Solution {
	return GroupMember{Consume: func(Member, *DB) {}}
}
