import { Module } from '@nestjs/common';
import { PersonalDataModule } from '../personal/personal-data.module';
import { SecretsController } from './secrets.controller';
import { SecretsService } from './secrets.service';

/** Named secrets an agent types without seeing them (MCP android_type_secret). */
@Module({ imports: [PersonalDataModule], controllers: [SecretsController], providers: [SecretsService], exports: [SecretsService] })
export class SecretsModule {}
