/**
 * @rolecraft/testing — test layers that replace one real dependency each,
 * built with the same constructors the real ones use (SPEC §12).
 *
 * @since 0.1.0
 */
export * as InMemoryMcp from "./InMemoryMcp.ts"
