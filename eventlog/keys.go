package eventlog

// keySlots is the number of keys a keyMemo remembers: a power of two.
const keySlots = 16

// keyMemo remembers the checksums (checksumIEEE) of the keys a log was
// produced to last, so that a producer cycling through a few keys finds a
// key's partition with a string comparison instead of a table look-up per
// byte of the key. It is a direct-mapped cache: a key has one slot,
// chosen by its last two bytes, and the slot holds the last key that was
// looked up in it. Keys numbered by a pattern mostly differ there, but
// not always: "order-0" to "order-13" take fourteen slots of their own,
// but "order-14" to "order-16" take those of "order-0" to "order-2", so a
// producer cycling through "order-0" to "order-16" misses on those six
// keys every time. A key that misses costs its checksum, as without the
// memo, plus a comparison and storing the key.
//
// The memo is a pure cache: sum(key) equals checksumIEEE(key) whatever it
// holds (TestKeyMemoMatchesChecksum), so the partitions of a log do not
// depend on it. It must not be asked for the empty key, whose slot it
// cannot take from its last bytes (the log places keyless records round
// robin); a slot it never filled holds "", which no key it is asked for
// equals. 320 bytes; it keeps up to keySlots keys alive.
type keyMemo struct {
	keys [keySlots]string
	sums [keySlots]uint32
}

// sum returns checksumIEEE(key) for a key that is not empty. A hit costs
// the comparison of key with the slot's key, which is a pointer
// comparison when the producer reuses its key strings, and at most
// O(len(key)); a miss costs the checksum too, O(len(key)).
func (k *keyMemo) sum(key string) uint32 {
	n := len(key)
	h := uint(key[n-1])
	if n > 1 {
		h += 3 * uint(key[n-2])
	}
	i := h & (keySlots - 1)
	if k.keys[i] == key {
		return k.sums[i]
	}
	s := checksumIEEE(key)
	k.keys[i], k.sums[i] = key, s
	return s
}
