/** A value now, or a promise of it: what ports answer when some backends answer at once (SQLite, the local store). */
export type MaybePromise<T> = T | Promise<T>;

/**
 * `next` applied to a value: at once when it is one, when it resolves when it is a promise.
 * An operation whose ports all answer at once then makes no promise at all (each costs a
 * turn of the microtask queue and garbage); one that waits makes the same promises as before.
 */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value as T);
}
