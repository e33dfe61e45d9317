package loop

// GoWatchers returns how many watcher goroutines of the pure-Go driver are
// alive (in every loop of the process).
func GoWatchers() int64 { return goWatchers.Load() }
