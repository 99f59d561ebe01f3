package main

// group runs actors together, in the manner of Prometheus's run.Group: each
// actor is an execute function that runs until it is done, and an
// interrupt function that makes execute return. When the first execute
// returns, every interrupt is called, in the order the actors were added,
// and run waits for every execute to return. It returns the first
// actor's error.
//
// tagqd's shutdown order is the order of the actors (signals, engine,
// gRPC, HTTP), so interrupts should start their stop and return; execute
// waits for it to finish.
type group struct {
	actors []actor
}

type actor struct {
	execute   func() error
	interrupt func(error)
}

// add adds an actor. interrupt must make execute return, and must be safe to
// call after execute has returned.
func (g *group) add(execute func() error, interrupt func(error)) {
	g.actors = append(g.actors, actor{execute, interrupt})
}

// run runs every actor and returns when all have returned.
func (g *group) run() error {
	if len(g.actors) == 0 {
		return nil
	}
	errs := make(chan error, len(g.actors))
	for _, a := range g.actors {
		go func() { errs <- a.execute() }()
	}
	err := <-errs
	for _, a := range g.actors {
		a.interrupt(err)
	}
	for range len(g.actors) - 1 {
		<-errs
	}
	return err
}
