/* samsa-monitor: the GTK4 desktop monitor of a Samsa cluster. */
#include "sm-application.h"

int main(int argc, char **argv)
{
    g_autoptr(SmApplication) app = sm_application_new();
    return g_application_run(G_APPLICATION(app), argc, argv);
}
