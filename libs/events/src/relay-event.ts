import type { AuthEvent } from './events/auth.events';
import type { BridgeEvent } from './events/bridge.events';
import type { PairingEvent } from './events/pairing.events';
import type { PhoneConnectionEvent } from './events/connection.events';
import type { RelayLifecycleEvent } from './events/relay.events';
import type { SessionEvent } from './events/session.events';
import type { ClipboardEvent } from './events/clipboard.events';
import type { ImageActivityEvent } from './events/image-activity.events';
import type { NotificationEvent } from './events/notifications.events';
import type { PhoneThreadsEvent } from './events/threads.events';
import type { TerminalEvent } from './events/terminal.events';
import type { MediaEvent } from './events/media.events';
import type { VoiceEvent } from './events/voice.events';
import type { ProfileEvent } from './events/profile.events';
import type { DesktopEvent } from './events/desktop.events';
import type { SecureLinkEvent } from './events/secure-link.events';
import type { StoreEvent } from './events/store.events';
import type { TrustEvent } from './events/trust.events';
import type { PersonalDataEvent } from './events/personal.events';
import type { ConsoleAccessEvent } from './events/console.events';
import type { LogEvent } from './events/log.events';
import type { SecretEvent } from './events/secret.events';

/** Every state change of the relay. Add a feature's union here (one line each); exhaustive switches find the gaps. */
export type RelayEvent =
  | RelayLifecycleEvent
  | PairingEvent
  | SessionEvent
  | TrustEvent
  | AuthEvent
  | PhoneConnectionEvent
  | PhoneThreadsEvent
  | NotificationEvent
  | ClipboardEvent
  | ImageActivityEvent
  | TerminalEvent
  | BridgeEvent
  | MediaEvent
  | VoiceEvent
  | ProfileEvent
  | DesktopEvent
  | StoreEvent
  | SecureLinkEvent
  | PersonalDataEvent
  | ConsoleAccessEvent
  | LogEvent
  | SecretEvent;

export type RelayEventType = RelayEvent['type'];
export type EventOf<T extends RelayEventType> = Extract<RelayEvent, { type: T }>;
export type DataOf<T extends RelayEventType> = EventOf<T>['data'];
