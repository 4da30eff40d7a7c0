package main

import "time"

// sleep waits n seconds between retries of a request the controller
// refused because the job was changing state.
func sleep(n int) { time.Sleep(time.Duration(n) * time.Second) }
