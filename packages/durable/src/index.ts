/**
 * @rolecraft/durable — durable chat turns on Effect's workflow engine: a turn
 * paused for approvals survives restarts and moves between processes.
 *
 * @since 0.1.0
 */
export * as DurableChat from "./DurableChat.ts"
export * as RunStore from "./RunStore.ts"
