import { Module } from '@nestjs/common';
import { ReachRouteCredentials } from './route-credentials';

/** Reach inside Nest: route credentials for phones (the connector itself starts after the relay listens). */
@Module({ providers: [ReachRouteCredentials] })
export class ReachModule {}
