/**
 * @rolecraft/core — actions, capabilities, roles and the agent that runs them.
 *
 * @since 0.1.0
 */
export * as ActionError from "./ActionError.ts"
