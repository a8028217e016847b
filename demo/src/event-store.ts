/**
 * The session's memory of the events it sent, so a client that reconnects with
 * `Last-Event-ID` gets what it missed (resumable streams). Ids carry a counter,
 * and events are replayed in the order they were stored: two events sent in the
 * same millisecond can never swap places. Holds the last `MAX_EVENTS` events.
 */
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const MAX_EVENTS = 1000;

export class SessionEventStore implements EventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  private counter = 0;

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}_${++this.counter}`;
    this.events.set(eventId, { streamId, message });
    if (this.events.size > MAX_EVENTS) {
      const oldest = this.events.keys().next().value;
      if (oldest !== undefined) this.events.delete(oldest);
    }
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = this.events.get(lastEventId)?.streamId;
    if (streamId === undefined) return "";
    let after = false;
    for (const [eventId, event] of this.events) {
      if (after && event.streamId === streamId) await send(eventId, event.message);
      after ||= eventId === lastEventId;
    }
    return streamId;
  }
}
