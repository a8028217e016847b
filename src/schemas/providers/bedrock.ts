/**
 * Amazon Bedrock Converse (`toolSpec.inputSchema.json`): `type must be one
 * of the following: object` at the root, and for Claude on Bedrock
 * Anthropic's rules (providers/anthropic.ts), which Bedrock passes on.
 */
import type { ViewPasses } from "../pass";
import { ANTHROPIC } from "./anthropic";

export const BEDROCK: ViewPasses = ANTHROPIC;
