// The two sides of a call. A leaf module: events, calls and media all speak of sides.
export type Side = 'agent' | 'customer';

export const SIDES: readonly Side[] = ['agent', 'customer'];

export const otherSide = (side: Side): Side => (side === 'agent' ? 'customer' : 'agent');
