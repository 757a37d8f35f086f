// Delivers events to the streams open in this process. One interface, so an implementation that fans
// out through Redis can serve several instances without the streams knowing.
import { EventEmitter } from 'node:events';
import type { BusEvent } from './types.js';

export type EventListener = (event: BusEvent) => void;

export interface EventBus {
  publish(event: BusEvent): void;
  subscribe(listener: EventListener): () => void;
}

export class LocalEventBus implements EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every open stream is a listener; there is no meaningful limit.
    this.emitter.setMaxListeners(0);
  }

  publish(event: BusEvent): void {
    this.emitter.emit('event', event);
  }

  subscribe(listener: EventListener): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }
}
