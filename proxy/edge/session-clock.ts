import type { ServerHttp2Session } from 'node:http2';

/**
 * One client connection's clock: no stream open for too long (before the first, or between streams) closes it;
 * and the client must acknowledge a PING within `keepAliveMs`, asked every `keepAliveMs`, or the connection is
 * destroyed. node's session stops reading and writing once it sent GOAWAY for a connection error (a header block
 * it cannot decompress, a protocol error) and never closes the connection itself: its open streams would wait
 * forever. A client that still reads its connection answers the PING whatever its streams do.
 */
export class SessionClock {
  #open = 0;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #probe: NodeJS.Timeout | undefined;

  constructor(
    private readonly session: ServerHttp2Session,
    private readonly keepAliveMs: number,
    firstStreamMs: number,
  ) {
    this.#arm(firstStreamMs);
    this.#nextProbe();
  }

  streamOpened(): void {
    this.#open++;
    clearTimeout(this.#timer);
  }

  streamClosed(): void {
    if (--this.#open === 0) this.#arm(this.keepAliveMs);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#probe);
  }

  /**
   * Runs a timer's work on the session unless the clock stopped or the session is gone: a late PING answer or
   * stream close must not re-arm a clock whose session closed, and a PING on a destroyed session throws. A throw
   * here ends this connection alone.
   */
  #onTimer(work: () => void): void {
    if (this.#stopped || this.session.destroyed) return;
    try {
      work();
    } catch {
      this.session.destroy();
    }
  }

  /** Bytes alone (a HEADERS frame trickled in, pings) do not count: only a stream ends the wait. */
  #arm(ms: number): void {
    clearTimeout(this.#timer);
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#onTimer(() => {
        this.session.close();
        // A client that does not read our GOAWAY (or keeps a frame half-sent) loses its connection.
        setTimeout(() => this.session.destroy(), 1000).unref();
      });
    }, ms);
    this.#timer.unref();
  }

  #nextProbe(): void {
    if (this.#stopped) return;
    this.#probe = setTimeout(() => {
      this.#onTimer(() => {
        this.#probe = setTimeout(() => this.session.destroy(), this.keepAliveMs).unref();
        this.session.ping((err) => {
          if (err !== null) return; // the session is closing
          clearTimeout(this.#probe);
          this.#nextProbe();
        });
      });
    }, this.keepAliveMs).unref();
  }
}
