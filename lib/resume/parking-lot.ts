/**
 * The parking lot: a bounded count of callers waiting on a resume that is retrying. It never blocks and never
 * queues; `tryEnter` either takes a slot or reports the lot full (the caller is then shed at once). Only callers
 * of a retrying flight take slots, so requests for running actors never wait behind a full lot.
 */
export class ParkingLot {
  private activeCount = 0;
  private rejectedCount = 0;

  constructor(readonly max: number) {}

  get active(): number {
    return this.activeCount;
  }

  /** Callers turned away because the lot was full (since start). */
  get rejected(): number {
    return this.rejectedCount;
  }

  tryEnter(): boolean {
    if (this.activeCount >= this.max) {
      this.rejectedCount++;
      return false;
    }
    this.activeCount++;
    return true;
  }

  leave(): void {
    if (this.activeCount > 0) this.activeCount--;
  }
}
