/**
 * Records built from keys that come from outside — a JSON Schema's property
 * names and keywords, a model's arguments — must take every key as a
 * property: `target[key] = value` with the key `__proto__` (which
 * `JSON.parse` makes an own key) would set the object's prototype instead.
 */

/** Sets an own, enumerable data property, also for the key `__proto__`. */
export const setOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}
