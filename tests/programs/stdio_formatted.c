/* stdio_formatted: formatted, line and character STDIO on DIR/text.txt, with known byte counts:
 * writes 1000 lines "line %04d\n" (10 bytes each) with fprintf, then "abc" with fputs, 'z' with
 * fputc and '\n' with putc (10005 bytes in all); reads it back with fgets (the first line),
 * fscanf ("line %d\n": the second), getline (the third), fgetc (one character) and getline to
 * the end (9974 bytes in 998 lines, then end of file).
 * usage: stdio_formatted DIR */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: stdio_formatted DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/text.txt", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    for (int i = 0; i < 1000; i++) fprintf(f, "line %04d\n", i);
    static char abc[] = "abc"; /* not a literal: the compiler would make fputs an fwrite */
    fputs(abc, f);
    fputc('z', f);
    putc('\n', f);
    fclose(f);

    f = fopen(path, "r");
    if (!f) return 1;
    char buf[64];
    if (!fgets(buf, sizeof buf, f)) return 1;
    int n = 0;
    if (fscanf(f, "line %d\n", &n) != 1 || n != 1) return 1;
    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, f) != 10) return 1;
    if (fgetc(f) != 'l') return 1;
    while (getline(&line, &cap, f) > 0) {
    }
    free(line);
    fclose(f);
    return 0;
}
