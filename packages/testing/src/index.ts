/**
 * @rolecraft/testing — test layers for Rolecraft, each built with the same
 * constructor as the real dependency it replaces (SPEC §12).
 *
 * @since 0.1.0
 */
export * as Approvals from "./Approvals.ts"
export * as FixedKnowledge from "./FixedKnowledge.ts"
