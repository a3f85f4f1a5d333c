// Command queue measures client-go's work queues and controller-runtime's priority queue the
// way codegen-runtime/benches/workqueue.rs measures ours: 10,000 distinct keys added, then
// handed out (Get) and finished (Done) by 1 or 4 workers; the time from the first add to the
// last Done, as nanoseconds per item (the median of -rounds runs).
//
// Output: one line per case, "go <queue> <workers> <ns/item>", read by scripts/bench-queue.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

const lowPriority = -100 // controller-runtime's handler.LowPriority

// queue is what one run needs of a queue.
type queue interface {
	add(k uint64)
	get() (uint64, bool)
	done(k uint64)
	shutDown()
}

type plain struct {
	q workqueue.TypedInterface[uint64]
}

func (p plain) add(k uint64)        { p.q.Add(k) }
func (p plain) get() (uint64, bool) { k, s := p.q.Get(); return k, !s }
func (p plain) done(k uint64)       { p.q.Done(k) }
func (p plain) shutDown()           { p.q.ShutDown() }

type rateLimited struct {
	q workqueue.TypedRateLimitingInterface[uint64]
}

func (p rateLimited) add(k uint64)        { p.q.Add(k) }
func (p rateLimited) get() (uint64, bool) { k, s := p.q.Get(); return k, !s }
func (p rateLimited) done(k uint64)       { p.q.Forget(k); p.q.Done(k) }
func (p rateLimited) shutDown()           { p.q.ShutDown() }

// prio adds every other key at the low priority, as a controller's initial list mixed with
// events would.
type prio struct {
	q priorityqueue.PriorityQueue[uint64]
}

func (p prio) add(k uint64) {
	if k%2 == 0 {
		p.q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(lowPriority)}, k)
	} else {
		p.q.Add(k)
	}
}
func (p prio) get() (uint64, bool) { k, _, s := p.q.GetWithPriority(); return k, !s }
func (p prio) done(k uint64)       { p.q.Forget(k); p.q.Done(k) }
func (p prio) shutDown()           { p.q.ShutDown() }

// run starts the workers, waits until each is about to take its first item (and a
// millisecond more, so that each waits in Get, as the Rust harness's workers wait in `get`),
// then adds the keys and returns the time from the first Add to the last Done.
func run(q queue, keys, workers int) time.Duration {
	var wg, started sync.WaitGroup
	var processed sync.WaitGroup
	processed.Add(keys)
	started.Add(workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			for {
				k, ok := q.get()
				if !ok {
					return
				}
				q.done(k)
				processed.Done()
			}
		}()
	}
	started.Wait()
	time.Sleep(time.Millisecond)
	start := time.Now()
	for k := range keys {
		q.add(uint64(k))
	}
	processed.Wait()
	d := time.Since(start)
	q.shutDown()
	wg.Wait()
	return d
}

func main() {
	keys := flag.Int("keys", 10000, "distinct keys per run")
	rounds := flag.Int("rounds", 30, "runs per case (the median is reported)")
	flag.Parse()
	cases := []struct {
		name string
		make func() queue
	}{
		{"client-go-Typed", func() queue { return plain{workqueue.NewTyped[uint64]()} }},
		{"client-go-TypedRateLimiting", func() queue {
			return rateLimited{workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[uint64]())}
		}},
		{"controller-runtime-priorityqueue", func() queue { return prio{priorityqueue.New[uint64]("")} }},
	}
	for _, c := range cases {
		for _, workers := range []int{1, 4} {
			ds := make([]time.Duration, 0, *rounds)
			for range *rounds {
				ds = append(ds, run(c.make(), *keys, workers))
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			med := ds[len(ds)/2]
			fmt.Fprintf(os.Stdout, "go %s %d %.1f\n", c.name, workers, float64(med.Nanoseconds())/float64(*keys))
		}
	}
}
