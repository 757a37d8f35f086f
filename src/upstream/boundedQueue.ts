// A FIFO that keeps only the newest `capacity` items: older ones are dropped, and counted.

export class BoundedQueue<T> {
  private items: T[] = [];
  /** Items dropped since the last takeDropped(). */
  private dropped = 0;

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
    while (this.items.length > this.capacity) {
      this.items.shift();
      this.dropped++;
    }
  }

  /** Takes every item, oldest first, leaving the queue empty. */
  takeAll(): T[] {
    const items = this.items;
    this.items = [];
    return items;
  }

  clear(): void {
    this.items = [];
  }

  /** How many items were dropped since the last call. */
  takeDropped(): number {
    const dropped = this.dropped;
    this.dropped = 0;
    return dropped;
  }
}
