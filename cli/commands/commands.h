/* SPDX-License-Identifier: GPL-2.0 */
/*
 * featprof's commands (cli/commands/): one file per command or family, each parsing its
 * arguments, asking featprofd (or reading files) and handing the answer to a writer.
 * main.c's table calls them; argv[0] is the command's name; each returns the exit status.
 */
#ifndef FP_CLI_COMMANDS_H
#define FP_CLI_COMMANDS_H

int cmd_list(int argc, char **argv);	/* list.c */
int cmd_enable(int argc, char **argv);	/* targets.c */
int cmd_disable(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_status(int argc, char **argv);	/* status.c */
int cmd_calibrate(int argc, char **argv);
int cmd_stats(int argc, char **argv);	/* stats.c */
int cmd_top(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_export(int argc, char **argv);	/* export.c */
int cmd_metrics(int argc, char **argv);	/* metrics.c */
int cmd_save(int argc, char **argv);	/* save.c */
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);	/* report.c */
int cmd_record(int argc, char **argv);	/* record.c */
int cmd_sample(int argc, char **argv);	/* sample.c */
int cmd_drill(int argc, char **argv);	/* drill.c */
int cmd_run(int argc, char **argv);	/* run.c */
int cmd_model(int argc, char **argv);	/* model.c */

#endif
