// The two sides of a call, as the contract names them: calls and media speak of sides.
import type { components } from '../generated/api.js';

export type Side = components['schemas']['Side'];

export const SIDES: readonly Side[] = ['agent', 'customer'];

export const otherSide = (side: Side): Side => (side === 'agent' ? 'customer' : 'agent');
