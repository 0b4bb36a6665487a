namespace Indexing.Indexer;

// How many rebuilds of one manager run at once (IndexOptions.MaxConcurrentRebuilds), and the queue
// of those waiting for a slot, first come first served. A rebuild enters when it starts (under the
// manager's lock, so the order is the order the rebuilds were started in: the catalog's at open) and
// takes a slot at once when one is free and nobody waits; otherwise it queues at the tail. A slot
// freed goes to the head of the queue in the same step, so a new rebuild never overtakes a waiting
// one. Which phases hold the slot is the manager's business (IndexManager.Rebuild.cs); this only counts.
//
// Threading: any thread; its own lock, never held while calling out (admission completes a task
// whose continuations run asynchronously), so it may be taken under the manager's lock.
internal sealed class RebuildSlots(int limit)
{
    private readonly Lock _lock = new();
    private readonly LinkedList<Ticket> _waiting = new();
    private int _held;

    public int Limit => limit;

    // A slot at once when one is free and nobody waits; otherwise a place at the tail of the queue.
    public Ticket Enter()
    {
        var ticket = new Ticket(this);
        lock (_lock)
        {
            if (_held < limit && _waiting.Count == 0)
            {
                _held++;
                ticket.Admit();
            }
            else
            {
                ticket.Node = _waiting.AddLast(ticket);
            }
        }

        return ticket;
    }

    // 1 for the head of the queue; null when the ticket holds a slot or left.
    private int? PositionOf(Ticket ticket)
    {
        lock (_lock)
        {
            if (ticket.Node is null)
            {
                return null;
            }

            var position = 1;
            for (var node = _waiting.First; node is not null && !ReferenceEquals(node, ticket.Node); node = node.Next)
            {
                position++;
            }

            return position;
        }
    }

    // Leaves the queue, or frees the slot and hands it to the head of the queue. Idempotent.
    private void Leave(Ticket ticket)
    {
        lock (_lock)
        {
            if (ticket.Node is { } node)
            {
                _waiting.Remove(node);
                ticket.Node = null;
                ticket.Close();
                return;
            }

            if (!ticket.Close())
            {
                return;
            }

            _held--;
            while (_held < limit && _waiting.First is { } first)
            {
                _waiting.RemoveFirst();
                first.Value.Node = null;
                _held++;
                first.Value.Admit();
            }
        }
    }

    // One rebuild's place: a slot held, or a place in the queue until Admitted completes.
    // Its state changes under the slots' lock only.
    public sealed class Ticket(RebuildSlots slots)
    {
        private readonly TaskCompletionSource _admitted = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private bool _holds;
        private bool _closed;

        // Completes when the ticket holds a slot (at once when Enter found one free).
        public Task Admitted => _admitted.Task;

        // Set while the ticket waits in the queue.
        internal LinkedListNode<Ticket>? Node { get; set; }

        public int? QueuePosition => slots.PositionOf(this);

        // Frees the slot (or leaves the queue); later calls do nothing.
        public void Release() => slots.Leave(this);

        internal void Admit()
        {
            _holds = true;
            _admitted.TrySetResult();
        }

        // True when the ticket held a slot (which the caller now frees).
        internal bool Close()
        {
            if (_closed)
            {
                return false;
            }

            _closed = true;
            return _holds;
        }
    }
}
