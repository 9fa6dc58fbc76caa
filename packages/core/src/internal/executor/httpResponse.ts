/**
 * How a non-2xx HTTP answer is classified, the same for a web service and for
 * a model API: a request timeout (408), too many requests (429) and server
 * errors (5xx) are transient and may be retried; every other status is a
 * refusal.
 */

/** Whether an HTTP status is transient: 408, 429 or 5xx. */
export const isTransientStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500
