/**
 * @rolecraft/core — actions, capabilities, roles, and the agent that runs them
 * through one fixed pipeline with nine typed errors.
 *
 * @since 0.1.0
 */
export * as Action from "./Action.ts"
export * as ActionError from "./ActionError.ts"
export * as ActionRequest from "./ActionRequest.ts"
export * as ActionResponse from "./ActionResponse.ts"
export * as ActionResult from "./ActionResult.ts"
export * as Agent from "./Agent.ts"
export * as Approval from "./Approval.ts"
export * as ApprovalStore from "./ApprovalStore.ts"
export * as Authority from "./Authority.ts"
export * as Capability from "./Capability.ts"
export * as Chat from "./Chat.ts"
export * as Contract from "./Contract.ts"
export * as Decision from "./Decision.ts"
export * as Events from "./Events.ts"
export * as Guardrail from "./Guardrail.ts"
export * as History from "./History.ts"
export * as Knowledge from "./Knowledge.ts"
export * as KnowledgeBase from "./KnowledgeBase.ts"
export * as LanguageModel from "./LanguageModel.ts"
export * as McpClient from "./McpClient.ts"
export * as Metrics from "./Metrics.ts"
export * as Prompt from "./Prompt.ts"
export * as Resilience from "./Resilience.ts"
export * as Role from "./Role.ts"
export * as StoreBoundary from "./StoreBoundary.ts"
export * as ToolCallId from "./ToolCallId.ts"
export * as ThreadStore from "./ThreadStore.ts"
export * as ToolResult from "./ToolResult.ts"
