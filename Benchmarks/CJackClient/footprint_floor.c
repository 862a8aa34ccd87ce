/* The floor client (passthrough_gain.c) with one thing of SoundFit's added at a time, chosen by
 * environment variables, to tell which of a process's traits changes what a JACK cycle costs
 * (Benchmarks/scripts/client_ab.py; docs/benchmarks/2026-11-30-cycle-place.md):
 *
 *   FLOOR_LIBS        colon-separated shared libraries to dlopen (SoundFit's Swift runtime,
 *                     Foundation, ICU, liblo, libsndfile)
 *   FLOOR_THREADS     idle threads to start
 *   FLOOR_HEAP_MB     megabytes of heap to allocate and touch
 *   FLOOR_CALLBACKS   set: register the JACK callbacks SoundFit registers (all do nothing)
 *   FLOOR_MIDI_PORT   set: register an unconnected MIDI input port
 *   FLOOR_FTZ         set: flush denormals to zero on the audio thread
 *   FLOOR_CODE_PAGES  call this many functions, each on a page of its own, every cycle (≤ 32)
 *   FLOOR_DATA_PAGES  write one cache line on each of this many pages every cycle (≤ 64)
 */
#include <jack/jack.h>
#include <dlfcn.h>
#include <pmmintrin.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <xmmintrin.h>

#define PAGE_FUNCTION(n) \
    __attribute__((noinline, aligned(4096))) static int page_function_##n(int x) { return x * (n + 3) + n; }
PAGE_FUNCTION(0) PAGE_FUNCTION(1) PAGE_FUNCTION(2) PAGE_FUNCTION(3) PAGE_FUNCTION(4) PAGE_FUNCTION(5)
PAGE_FUNCTION(6) PAGE_FUNCTION(7) PAGE_FUNCTION(8) PAGE_FUNCTION(9) PAGE_FUNCTION(10) PAGE_FUNCTION(11)
PAGE_FUNCTION(12) PAGE_FUNCTION(13) PAGE_FUNCTION(14) PAGE_FUNCTION(15) PAGE_FUNCTION(16) PAGE_FUNCTION(17)
PAGE_FUNCTION(18) PAGE_FUNCTION(19) PAGE_FUNCTION(20) PAGE_FUNCTION(21) PAGE_FUNCTION(22) PAGE_FUNCTION(23)
PAGE_FUNCTION(24) PAGE_FUNCTION(25) PAGE_FUNCTION(26) PAGE_FUNCTION(27) PAGE_FUNCTION(28) PAGE_FUNCTION(29)
PAGE_FUNCTION(30) PAGE_FUNCTION(31)
static int (*const page_functions[32])(int) = {
    page_function_0, page_function_1, page_function_2, page_function_3, page_function_4, page_function_5,
    page_function_6, page_function_7, page_function_8, page_function_9, page_function_10, page_function_11,
    page_function_12, page_function_13, page_function_14, page_function_15, page_function_16, page_function_17,
    page_function_18, page_function_19, page_function_20, page_function_21, page_function_22, page_function_23,
    page_function_24, page_function_25, page_function_26, page_function_27, page_function_28, page_function_29,
    page_function_30, page_function_31};

static jack_port_t *inputs[2], *outputs[2];
static volatile sig_atomic_t running = 1;
static int code_pages, data_pages;
static char *data_block;
static volatile int sink;

static int number(const char *name, int maximum) {
    const char *value = getenv(name);
    int n = value ? atoi(value) : 0;
    return n < 0 ? 0 : n > maximum ? maximum : n;
}

static int process(jack_nframes_t frames, void *unused) {
    (void)unused;
    int sum = 0;
    for (int i = 0; i < code_pages; i++) sum += page_functions[i](i);
    for (int i = 0; i < data_pages; i++) sum += data_block[(size_t)i * 4096 + 64 * (i % 64)]++;
    sink = sum;
    for (int channel = 0; channel < 2; channel++) {
        const float *in = jack_port_get_buffer(inputs[channel], frames);
        float *out = jack_port_get_buffer(outputs[channel], frames);
        for (jack_nframes_t frame = 0; frame < frames; frame++) out[frame] = 0.5f * in[frame];
    }
    return 0;
}

static void thread_init(void *unused) {
    (void)unused;
    if (getenv("FLOOR_FTZ")) {
        _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
        _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
    }
    prctl(PR_SET_NAME, "floor-audio");
}
static int on_number(jack_nframes_t n, void *unused) { (void)n; (void)unused; return 0; }
static int on_xrun(void *unused) { (void)unused; return 0; }
static void on_freewheel(int starting, void *unused) { (void)starting; (void)unused; }
static void on_latency(jack_latency_callback_mode_t mode, void *unused) { (void)mode; (void)unused; }
static void on_connect(jack_port_id_t a, jack_port_id_t b, int made, void *unused) {
    (void)a; (void)b; (void)made; (void)unused;
}
static void on_registration(jack_port_id_t port, int registered, void *unused) {
    (void)port; (void)registered; (void)unused;
}
static void *idle(void *unused) { (void)unused; for (;;) pause(); return NULL; }
static void stop(int signal) { (void)signal; running = 0; }

int main(int argc, char **argv) {
    const char *libraries = getenv("FLOOR_LIBS");
    if (libraries) {
        char *list = strdup(libraries);
        for (char *library = strtok(list, ":"); library; library = strtok(NULL, ":"))
            if (!dlopen(library, RTLD_NOW | RTLD_GLOBAL)) fprintf(stderr, "dlopen: %s\n", dlerror());
    }
    for (int i = number("FLOOR_THREADS", 64); i > 0; i--) {
        pthread_t thread;
        pthread_create(&thread, NULL, idle, NULL);
    }
    size_t heap = (size_t)number("FLOOR_HEAP_MB", 1024) << 20;
    if (heap) memset(malloc(heap), 1, heap);
    code_pages = number("FLOOR_CODE_PAGES", 32);
    data_pages = number("FLOOR_DATA_PAGES", 64);
    data_block = calloc(64, 4096);

    jack_client_t *client = jack_client_open(argc > 1 ? argv[1] : "footprint_floor", JackNoStartServer, NULL);
    if (!client) {
        fprintf(stderr, "cannot connect to JACK\n");
        return 1;
    }
    char name[16];
    for (int channel = 0; channel < 2; channel++) {
        snprintf(name, sizeof name, "in_%d", channel + 1);
        inputs[channel] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        snprintf(name, sizeof name, "out_%d", channel + 1);
        outputs[channel] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    }
    jack_set_process_callback(client, process, NULL);
    jack_set_thread_init_callback(client, thread_init, NULL);
    if (getenv("FLOOR_CALLBACKS")) {
        jack_set_sample_rate_callback(client, on_number, NULL);
        jack_set_buffer_size_callback(client, on_number, NULL);
        jack_set_xrun_callback(client, on_xrun, NULL);
        jack_set_freewheel_callback(client, on_freewheel, NULL);
        jack_set_latency_callback(client, on_latency, NULL);
        jack_set_port_connect_callback(client, on_connect, NULL);
        jack_set_port_registration_callback(client, on_registration, NULL);
    }
    if (getenv("FLOOR_MIDI_PORT")) jack_port_register(client, "midi_in", JACK_DEFAULT_MIDI_TYPE, JackPortIsInput, 0);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    if (jack_activate(client) != 0) return 1;
    while (running) pause();
    jack_client_close(client);
    return 0;
}
