import { EventEmitter } from 'node:events';

/**
 * What undici listens to for a request's abort instead of the caller's AbortSignal: one
 * EventEmitter per signal, which emits `abort` (with the signal's `reason`) when the signal
 * aborts. undici documents an EventEmitter as a request's `signal`.
 *
 * Why: a sync sends every request with the run's one signal, and undici given an AbortSignal
 * registers a listener on it through Node's EventTarget for each request. Measured with the bare
 * undici loop on loopback (2026-11-27, 40,000 profiles, three alternating runs each), passing an
 * AbortSignal raised the loop's CPU per request by 9–18 µs, and a CPU profile put most of it in
 * garbage collection (5.3 → 12.8 µs per request); the relay's listeners are plain array entries.
 * In the sync itself the gain is inside this machine's run-to-run spread (loopback, profile
 * writes discarded, four alternating pairs: 177–209 against 176–253 µs per profile). The relay
 * has no `aborted` property, so undici takes it for an EventEmitter; an already aborted signal is
 * checked before sending (`HttpTransport` `#send`, http-transport.ts).
 */
export interface AbortRelay extends EventEmitter {
  reason?: unknown;
}

const abortRelays = new WeakMap<AbortSignal, AbortRelay>();

/** The {@link AbortRelay} of `signal`, made on first use; the signal must not be aborted yet. */
export function abortRelayOf(signal: AbortSignal): AbortRelay {
  let relay = abortRelays.get(signal);
  if (relay === undefined) {
    const made: AbortRelay = new EventEmitter();
    // As many listeners as requests in flight on the signal (the run's concurrency).
    made.setMaxListeners(0);
    signal.addEventListener(
      'abort',
      () => {
        made.reason = signal.reason;
        made.emit('abort');
      },
      { once: true },
    );
    abortRelays.set(signal, (relay = made));
  }
  return relay;
}
