/** Milliseconds since the epoch; injectable so tests can move time instead of sleeping. */
export type Clock = () => number;
