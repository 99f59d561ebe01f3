// The request side of a bidi stream: an async iterable that connect pulls
// frames from, built on demand from the caller's pending state.

/**
 * Hands frames to connect as it asks for them. `take` builds the next frame
 * from whatever is pending (undefined: nothing yet); `wake` is called when
 * something new is pending (coalesced to one take per microtask, so settlements
 * made in one tick share a frame); `end` finishes the request side once the
 * pending frames are taken (the client's CloseSend).
 */
export class Outbox<T> implements AsyncIterable<T> {
  private waiter: { resolve: (r: IteratorResult<T, undefined>) => void; reject: (e: unknown) => void } | undefined;
  private failure: { error: unknown } | undefined;
  private ended = false;
  private scheduled = false;

  constructor(private readonly take: () => T | undefined) {}

  /** Something is pending: hand it over (in a microtask) if connect is waiting. */
  wake(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.serve();
    });
  }

  /** Ends the request side after the pending frames. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  /** Whether end was called. */
  get isEnded(): boolean {
    return this.ended;
  }

  private serve(): void {
    const w = this.waiter;
    if (!w) return;
    const frame = this.take();
    if (frame !== undefined) {
      this.waiter = undefined;
      w.resolve({ value: frame, done: false });
    } else if (this.ended) {
      this.waiter = undefined;
      w.resolve({ value: undefined, done: true });
    }
  }

  /**
   * The one iterator (connect asks for it again to call throw and return
   * when the call is aborted or done).
   *
   * throw (an abort) fails the pending next(), so that connect resets the
   * HTTP/2 stream: ending it instead would send END_STREAM first, which the
   * server takes for a clean close (a Consume stream would then give its
   * messages back at once instead of leaving them to their deadlines).
   */
  private readonly iterator: AsyncIterator<T, undefined> = {
    next: () => {
      if (this.failure) return Promise.reject(this.failure.error);
      const frame = this.take();
      if (frame !== undefined) return Promise.resolve({ value: frame, done: false });
      if (this.ended) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
    },
    throw: (e?: unknown) => {
      this.ended = true;
      this.failure ??= { error: e };
      const w = this.waiter;
      this.waiter = undefined;
      w?.reject(e);
      return Promise.resolve({ value: undefined, done: true });
    },
    return: () => {
      this.ended = true;
      const w = this.waiter;
      this.waiter = undefined;
      w?.resolve({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true });
    },
  };

  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    return this.iterator;
  }
}
