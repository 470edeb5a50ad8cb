import { notificationKey, notificationPackage, notificationPostedAt, notificationText, type PostedNotification } from '@svc/domain';
import { DomainRule } from '../common/http/dto-refusals';

/*
 * The `notifications` channel's frames, read with readFrame (parse-frame.ts). The rules are the domain's
 * (notifications.ts), so a refusal keeps its code, `notifications.bad_field {field}`, and its words. The
 * fields are declared in the order the domain checked them, so a frame with several bad fields names the
 * same first `field`. Fields no rule names are dropped (newer phones may send more).
 */

const Field = (field: string, rule: (value: unknown) => unknown): PropertyDecorator => DomainRule(field, 'notifications.bad_field', rule, { field });

const Text = (field: string): PropertyDecorator => Field(field, (v) => notificationText(field, v));

/** `notification.posted {package_name, title, text, sub_text?, posted_at, key?}`. */
export class NotificationPostedFrame {
  @Field('package_name', notificationPackage) package_name!: string;
  /** Epoch seconds or milliseconds; absent or null: not said. */
  @Field('posted_at', notificationPostedAt) posted_at?: number | null;
  @Text('title') title?: string | null;
  @Text('text') text?: string | null;
  @Text('sub_text') sub_text?: string | null;
  @Text('key') key?: string | null;

  /** The entry as the domain's postNotification takes it. */
  entry(): PostedNotification {
    return {
      packageName: this.package_name,
      title: this.title ?? null,
      text: this.text ?? null,
      subText: this.sub_text ?? null,
      postedAt: this.posted_at ?? null,
      key: this.key ?? null,
    };
  }
}

/** `notification.removed {key}`. */
export class NotificationRemovedFrame {
  @Field('key', notificationKey) key!: string;
}
