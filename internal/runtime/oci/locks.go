package oci

import "sync"

// idLocks serialises operations on one sandbox id while letting different
// ids proceed in parallel (Create of one sandbox must not wait for the
// Destroy of another).
type idLocks struct {
	mu    sync.Mutex         // mu protects locks.
	locks map[string]*idLock // entries live while someone holds or waits
}

type idLock struct {
	mu   sync.Mutex
	refs int
}

// lock locks id and returns the unlock function.
func (l *idLocks) lock(id string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*idLock)
	}
	e := l.locks[id]
	if e == nil {
		e = &idLock{}
		l.locks[id] = e
	}
	e.refs++
	l.mu.Unlock()

	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		l.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(l.locks, id)
		}
		l.mu.Unlock()
	}
}
