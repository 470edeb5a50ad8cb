import type { Ev } from '../event';

/** Image-generation lifecycle of a chat session, as `GET /chat/image-activity` reports it. */
export type ImageActivityStatus = 'started' | 'progress' | 'completed' | 'failed';
/** Fed by the host platform; never a prompt, text or tool result. Ephemeral (reset at `relay.started`). */
export type ImageActivityReported = Ev<
  'chat.image_activity',
  { sessionId: string; callId: string; status: ImageActivityStatus; progress: number | null; errorCode: string | null }
>;
export type ImageActivityEvent = ImageActivityReported;
